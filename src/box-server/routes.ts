/** Every route, most specific first (the router takes the first pattern and method that match). */
import { authRoutes } from './routes-auth.js';
import { contentRoutes } from './routes-content.js';
import { controlRoutes } from './control-http.js';
import { itemRoutes } from './routes-items.js';
import { downloadRoutes } from './routes-download.js';
import type { Route } from './route.js';

export const allRoutes: readonly Route[] = [...controlRoutes, ...downloadRoutes, ...authRoutes, ...contentRoutes, ...itemRoutes];
