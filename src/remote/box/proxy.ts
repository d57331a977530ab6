/**
 * Proxies, as enterprises that use Box need: HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (either case) name the proxy
 * for a URL's scheme, NO_PROXY lists hosts reached directly (proxy-from-env applies the usual rules: suffixes,
 * ports, `*`). Every request of the Box client goes through here: API calls, uploads, the download host, the
 * token endpoint, the long poll. Every target is reached through a CONNECT tunnel (hpagent), so TLS stays end
 * to end and the token is never seen by the proxy. One agent per proxy URL and scheme, kept alive like got's own.
 */
import type { Agent as HttpAgent } from 'node:http';
import type { Agents } from 'got';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import { getProxyForUrl } from 'proxy-from-env';

const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };

export class ProxyAgents {
  private readonly agents = new Map<string, HttpAgent>();
  /** The answer for each origin: the proxy rules depend only on scheme, host and port (read once per origin). */
  private readonly byOrigin = new Map<string, Agents | undefined>();

  /** The agents for this URL, or undefined to connect directly. */
  for(url: URL | string): Agents | undefined {
    const target = typeof url === 'string' ? new URL(url) : url;
    const origin = target.origin;
    if (this.byOrigin.has(origin)) return this.byOrigin.get(origin);
    const agents = this.#lookup(target);
    this.byOrigin.set(origin, agents);
    return agents;
  }

  #lookup(target: URL): Agents | undefined {
    const proxy = getProxyForUrl(target.href);
    if (!proxy) return undefined;
    const https = target.protocol === 'https:';
    const key = `${https ? 'https' : 'http'} ${proxy}`;
    let agent = this.agents.get(key);
    if (agent === undefined) {
      agent = https ? new HttpsProxyAgent({ ...AGENT_OPTIONS, proxy }) : new HttpProxyAgent({ ...AGENT_OPTIONS, proxy });
      this.agents.set(key, agent);
    }
    return https ? { https: agent as Agents['https'] } : { http: agent };
  }

  /** Sockets kept alive to proxies are closed with the client. */
  destroy(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
    this.byOrigin.clear();
  }
}
