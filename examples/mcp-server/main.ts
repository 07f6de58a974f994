import { main } from './server.js';

await main();
