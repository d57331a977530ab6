// Placeholder until box-server lands: replaced by the real command-line entry.
export async function runServerCli(_args: readonly string[]): Promise<number> {
  process.stderr.write('box-server is not built yet\n');
  return 2;
}
