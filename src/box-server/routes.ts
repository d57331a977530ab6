/** Every route, most specific first (the router takes the first pattern and method that match). */
import { authRoutes } from './routes-auth.js';
import { contentRoutes } from './routes-content.js';
import { controlRoutes } from './control-http.js';
import { downloadRoutes } from './routes-download.js';
import { eventRoutes } from './routes-events.js';
import { folderLockRoutes } from './folder-locks.js';
import { itemRoutes } from './routes-items.js';
import type { Route } from './route.js';
import { sessionRoutes } from './routes-sessions.js';
import { sharedRoutes } from './routes-shared.js';
import { trashRoutes } from './routes-trash.js';
import { zipRoutes } from './zip-downloads.js';

export const allRoutes: readonly Route[] = [
  ...controlRoutes,
  ...downloadRoutes,
  ...zipRoutes,
  ...authRoutes,
  ...eventRoutes,
  ...sharedRoutes,
  ...folderLockRoutes,
  ...sessionRoutes,
  ...contentRoutes,
  ...trashRoutes,
  ...itemRoutes,
];
