// The bundle's stand-in for http2-wrapper (scripts/bundle-cli.mjs). got imports it at load time but reads only its
// `auto` and `globalAgent`, and only for a request made with got's `http2` option, which boxsync never sets: loading
// it (and node:http2) cost every `boxsync sync` start. The real module is bundled too and loaded on first use.
'use strict';
let real;
const load = () => (real ??= require('http2-wrapper/source/index.js'));
module.exports = {
  get auto() {
    return load().auto;
  },
  get globalAgent() {
    return load().globalAgent;
  },
};
