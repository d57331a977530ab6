import { asRemoteId } from '../../src/core/model.js';
import { remoteStoreContract } from '../support/remote-store-contract.js';
import { adapterFor, startServer } from './box/harness.js';

remoteStoreContract('Box adapter over HTTP against box-server', async () => {
  const server = await startServer();
  const adapter = adapterFor(server, { listPageSize: 3 });
  return {
    store: adapter.store,
    rootId: asRemoteId('0'),
    pageSize: 3,
    cleanup: async () => {
      await adapter.close();
      await server.close();
    },
  };
});
