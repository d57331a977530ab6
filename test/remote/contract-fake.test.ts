import { asRemoteId } from '../../src/core/model.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';
import { remoteStoreContract } from '../support/remote-store-contract.js';

remoteStoreContract('in-memory fake', async () => ({
  store: new FakeRemoteStore({ pageSize: 3 }),
  rootId: asRemoteId('0'),
  cleanup: async () => {},
  pageSize: 3,
}));
