// Platformatic DB v3 as one Node process through its programmatic API (create + start), no runtime
// workers. Config: platformatic.json beside this file (PLT_PORT, DATABASE_URL, JWT_SECRET from env).
import { create } from '@platformatic/db';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const app = await create(root, process.env.PLT_CONFIG ?? 'platformatic.json', {
  isProduction: true,
  serverConfig: { hostname: '127.0.0.1', port: Number(process.env.PLT_PORT) },
});
const url = await app.start({ listen: true });
console.log(`listening ${url}`);
process.on('SIGTERM', async () => {
  await app.stop();
  process.exit(0);
});
