/**
 * Which of box-node-sdk's own integration tests (node_modules/box-node-sdk/src/test/*.test.ts) run against
 * box-server, and why the others do not. The in-scope areas are issue 12's: users/me, files, folders, uploads
 * (simple and chunked), downloads, file versions, trash, web links, shared links, locks, copy, events and long
 * poll, folder locks, and zip downloads. Every file not listed in IN_SCOPE_FILES is excluded with its reason printed at the start of the run;
 * inside an in-scope file, the tests in SKIPPED_TESTS are skipped with their reason in the test's name.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The SDK version the suite is pinned to (package.json pins it exactly; a bump must be deliberate). */
export const SDK_VERSION = '10.12.0';

const require = createRequire(import.meta.url);
// The package's exports map hides package.json; its CommonJS entry is lib/index.js.
export const SDK_ROOT = dirname(dirname(require.resolve('box-node-sdk')));
export const SDK_SRC = join(SDK_ROOT, 'src');
export const SDK_TEST_DIR = join(SDK_SRC, 'test');

export const IN_SCOPE_FILES: readonly string[] = [
  'users.test.ts',
  'files.test.ts',
  'folders.test.ts',
  'uploads.test.ts',
  'chunkedUploads.test.ts',
  'downloads.test.ts',
  'fileVersions.test.ts',
  'trashedFiles.test.ts',
  'trashedFolders.test.ts',
  'trashedWebLinks.test.ts',
  'trashedItems.test.ts',
  'weblinks.test.ts',
  'sharedLinksFiles.test.ts',
  'sharedLinksFolders.test.ts',
  'sharedLinksWebLinks.test.ts',
  'events.test.ts',
  'folderLocks.test.ts',
  'zipDownloads.test.ts',
];

/** Tests inside in-scope files that need something out of scope, by test name (names are unique in the SDK). */
export const SKIPPED_TESTS: Readonly<Record<string, string>> = {
  test_get_users: 'user administration (GET /users lists the enterprise) is out of scope',
  test_create_update_get_delete_user: 'user administration (create/update/delete users) is out of scope',
  testGetFileThumbnailUrl: 'thumbnails are out of scope',
  testGetFileThumbnail: 'thumbnails are out of scope',
  testEventDeleteUser: 'needs DELETE_USER admin events, i.e. user administration, which is out of scope',
};

/** Why a whole file is excluded; the first matching rule wins. */
const EXCLUDED_FILE_REASONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^auth\.test\.ts$/, 'JWT, client-credentials (CCG) and token-exchange (downscope) auth are out of scope'],
  [/^(users|userCollaborations|emailAliases|memberships|groups|invites|externalUsers|sessionTermination|transfer|avatars|devicePinners|enterpriseConfigurations)\.test\.ts$/, 'user and enterprise administration are out of scope'],
  [/^(legalHold|fileVersionLegalHolds|fileVersionRetentions|retention|shield|storagePolic|termsOfService|collaborationAllowlist|classifications|fileClassifications|folderClassifications|fileWatermarks|folderWatermarks)/, 'enterprise governance and compliance (admin features) are out of scope'],
  [/^(ai|aiStudio|docgen|docgenTemplate|hubDocument|notes|sign|skills|workflows|automateWorkflows|archives)/, 'Box AI, Sign, Doc Gen, Hubs, Notes, Skills, Relay and archives are out of scope (products beyond the files API)'],
  [/^(fileMetadata|folderMetadata|metadata)/, 'metadata templates and instances are out of scope'],
  [/^(listCollaborations|collections|comments|tasks|taskAssignments|fileRequests|recentItems|search|webhooks|appItemAssociations|sharedLinksAppItems)\.test\.ts$/, 'collaboration, collections, comments, tasks, file requests, recents, search, webhooks and app items are out of scope'],
  [/^client\.test\.ts$/, 'generic client plumbing: its makeRequest tests hard-code https://api.box.com and https://upload.box.com URLs (another host, refused by the guard), the As-User test creates a user (user administration), the rest test timeouts and interceptors of the client, not an API area'],
];

export function excludedReason(file: string): string {
  for (const [re, reason] of EXCLUDED_FILE_REASONS) if (re.test(file)) return reason;
  return 'API area outside issue 12\'s scope (not implemented by box-server)';
}

export function sdkTestFiles(): string[] {
  return readdirSync(SDK_TEST_DIR)
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
}

export function excludedFiles(): Array<{ file: string; reason: string }> {
  return sdkTestFiles()
    .filter((f) => !IN_SCOPE_FILES.includes(f))
    .map((file) => ({ file, reason: excludedReason(file) }));
}
