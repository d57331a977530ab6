/**
 * Registers every subcommand. Each command's module is imported lazily inside its action.
 * One line per command; the command's own options are declared in its module's `register` function.
 */
import type { Command } from 'commander';
import { register as registerServer } from './server.js';
import { register as registerSync } from './sync.js';
import { register as registerDemo } from './demo.js';
import { register as registerStatus } from './status.js';
import { register as registerControl } from './control.js';
import { register as registerService } from './service.js';
import { register as registerLogin } from './login.js';
import { register as registerDaemon } from './daemon.js';
import { register as registerDemoLive } from './demo-live.js';
import { register as registerCompletion } from './completion.js';
import { register as registerLs } from './ls.js';
import { register as registerConfig } from './config-cmd.js';
import { register as registerInit } from './init.js';
import { register as registerItems } from './items.js';
import { register as registerRetry } from './retry.js';
import { register as registerSelective } from './selective.js';
import { register as registerUi } from './ui.js';

export function registerCommands(program: Command): void {
  registerServer(program);
  registerSync(program);
  registerDemo(program);
  registerStatus(program);
  registerControl(program);
  registerService(program);
  registerLogin(program);
  registerDaemon(program);
  registerDemoLive(program);
  registerInit(program);
  registerLs(program);
  registerConfig(program);
  registerItems(program);
  registerRetry(program);
  registerSelective(program);
  registerUi(program);
  registerCompletion(program);
}
