import { it } from 'vitest';
import { runCase } from './plan-random.js';
it('replay', () => {
  runCase(JSON.parse(process.env.CASE!)[0]);
});
