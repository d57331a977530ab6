/** Routes outside the API prefix that need no bearer token: signed downloads. */
import { serveDownload } from './download.js';
import { open, type Route } from './route.js';

export const downloadRoutes: readonly Route[] = [open('GET', /^\/dl\/([A-Za-z0-9_.-]+)$/, serveDownload)];
