/**
 * Vite plugin for the SDK suite: rewrites the SDK's `src/test/commons.ts` (Apache-2.0, run from the installed
 * package, never copied) so that its client factory builds a developer-token client whose base URLs point at
 * the box-server of the running test file (over HTTPS, trusting its test certificate). Only the two factory functions change; every other helper
 * (createNewFolder, uploadNewFile, ...) runs as shipped, through the replaced factory. If the SDK's source no
 * longer has the expected shape the transform fails loudly instead of running the tests against Box.
 */
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vitest/config';

const ENV_MODULE = fileURLToPath(new URL('./env.ts', import.meta.url));

const REPLACEMENTS: ReadonlyArray<readonly [string, string]> = [
  [
    'export function getDefaultClient(): BoxClient {',
    `export function getDefaultClient(): BoxClient {
  const s = __sdkSuite.suiteServer();
  return new BoxClient({ auth: new __BoxDeveloperTokenAuth({ token: s.admin.token }) }).withCustomBaseUrls(s.baseUrls).withCustomAgentOptions(s.agentOptions);
}
function __shippedGetDefaultClient(): BoxClient {`,
  ],
  [
    'export function getDefaultClientWithUserSubject(userId: string): BoxClient {',
    `export function getDefaultClientWithUserSubject(userId: string): BoxClient {
  const s = __sdkSuite.suiteServer();
  return new BoxClient({ auth: new __BoxDeveloperTokenAuth({ token: __sdkSuite.tokenForUser(userId) }) }).withCustomBaseUrls(s.baseUrls).withCustomAgentOptions(s.agentOptions);
}
function __shippedGetDefaultClientWithUserSubject(userId: string): BoxClient {`,
  ],
];

const HEADER = `import { BoxDeveloperTokenAuth as __BoxDeveloperTokenAuth } from '@/box/developerTokenAuth';
import * as __sdkSuite from ${JSON.stringify(ENV_MODULE)};
`;

export function sdkCommonsPlugin(sdkTestDir: string): Plugin {
  const commons = `${sdkTestDir}/commons.ts`;
  return {
    name: 'boxsync-sdk-suite-commons',
    enforce: 'pre',
    transform(code, id) {
      if (id.split('?')[0] !== commons) return null;
      let out = code;
      for (const [from, to] of REPLACEMENTS) {
        if (!out.includes(from)) throw new Error(`sdk-suite: ${commons} no longer contains "${from}"; update test/sdk-suite/plugin.ts`);
        out = out.replace(from, to);
      }
      return { code: HEADER + out, map: null };
    },
  };
}
