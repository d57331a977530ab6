/** The programmatic test-control surface (BoxServerControl) over a running server's core. */
import { makeActor } from './actor.js';
import type { ServerCore } from './core.js';
import { expireAllSessions } from './session-ops.js';
import { defaultUserId, gib } from './store.js';
import { setZipFaults } from './zip-downloads.js';
import type { BoxServerControl } from './types.js';

export function makeControl(core: ServerCore): BoxServerControl {
  const store = core.store;
  const flushed = <T>(v: T): T => {
    store.flush();
    return v;
  };
  return {
    addUser(opts = {}) {
      const id = String(store.state.nextUserId++);
      store.state.users[id] = {
        id,
        name: opts.name ?? `User ${id}`,
        login: opts.login ?? `user${id}@example.com`,
        spaceAmountBytes: opts.spaceAmountBytes ?? 100 * gib,
        maxUploadSizeBytes: opts.maxUploadSizeBytes ?? 50 * gib,
        enterpriseAdmin: opts.enterpriseAdmin ?? false,
        isolated: opts.isolated ?? false,
        createdAtMs: store.now(),
      };
      return flushed({ userId: id, token: core.auth.addDeveloperToken(id) });
    },
    issueToken(userId) {
      return flushed(core.auth.addDeveloperToken(userId));
    },
    registerOAuthClient(opts) {
      core.auth.registerClient(opts.clientId, opts.clientSecret, opts.redirectUris ?? [], opts.userId ?? defaultUserId);
      store.flush();
    },
    issueAuthCode(clientId, userId, redirectUri) {
      return flushed(core.auth.issueAuthCode(clientId, userId, redirectUri));
    },
    failNext(rule) {
      core.faults.add(rule);
    },
    clearFaults() {
      core.faults.clear();
    },
    commitAccepted(count, retryAfterSec = 1) {
      core.commitAccepted = { remaining: count, retryAfterSec };
    },
    expireAllTokens() {
      core.auth.expireAll();
      store.flush();
    },
    revokeAll(userId) {
      core.auth.revokeAll(userId);
      store.flush();
    },
    setRateLimit(opts) {
      core.faults.setRateLimit(opts);
    },
    setEventChaos(opts) {
      core.chaos = { duplicate: opts.duplicate ?? false, reorder: opts.reorder ?? false };
    },
    as(userId) {
      return makeActor(store, userId);
    },
    requests() {
      return [...core.requestLog];
    },
    clearRequests() {
      core.requestLog.length = 0;
    },
    expireUploadSessions() {
      expireAllSessions(store);
      store.flush();
    },
    zipFaults(f) {
      setZipFaults(core, f);
    },
  };
}
