// Box's generated SDK (box-typescript-sdk-gen) at its default base URLs (https://api.box.com, https://upload.box.com),
// run as its own process: it reaches box-server only through HTTPS_PROXY and trusts it only through
// NODE_EXTRA_CA_CERTS, the lines `boxsync server --as-box` prints. Token from BOX_DEVELOPER_TOKEN.
// Creates a folder, uploads a file into it, downloads it back, and prints what it saw as one JSON line.
'use strict';
const { createHash } = require('node:crypto');
const { Readable } = require('node:stream');
const { BoxClient, BoxDeveloperTokenAuth } = require('box-typescript-sdk-gen');

async function main() {
  const token = process.env.BOX_DEVELOPER_TOKEN;
  if (!token) throw new Error('BOX_DEVELOPER_TOKEN is not set');
  const client = new BoxClient({ auth: new BoxDeveloperTokenAuth({ token }) });
  const me = await client.users.getUserMe();
  const folder = await client.folders.createFolder({ name: process.argv[2] ?? 'sdk-as-box', parent: { id: '0' } });
  const bytes = Buffer.from('uploaded by the SDK at its default base URLs\n');
  const uploaded = await client.uploads.uploadFile({
    attributes: { name: 'sdk.txt', parent: { id: folder.id } },
    file: Readable.from([bytes]),
  });
  const file = uploaded.entries[0];
  const stream = await client.downloads.downloadFile(file.id);
  const chunks = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  const items = await client.folders.getFolderItems(folder.id);
  process.stdout.write(
    `${JSON.stringify({
      login: me.login,
      folderId: folder.id,
      fileId: file.id,
      uploadedSha1: createHash('sha1').update(bytes).digest('hex'),
      downloadedSha1: createHash('sha1').update(Buffer.concat(chunks)).digest('hex'),
      listed: items.entries.map((e) => e.name),
    })}\n`,
  );
}

main().catch((e) => {
  process.stderr.write(`as-box-sdk-client: ${e && e.stack ? e.stack : String(e)}\n`);
  process.exit(1);
});
