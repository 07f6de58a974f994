import { serve } from './api.js';

await serve();
