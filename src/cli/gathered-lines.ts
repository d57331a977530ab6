/**
 * `sync --once` without a terminal prints a line per operation (and log lines) on stderr: a first mirror of 20,000
 * small files made 20,000 writes, each through the stream's machinery and a system call on the main thread. The
 * text written during one turn of the event loop is gathered and written as one chunk at the end of the turn (or
 * once 64 KiB are waiting, or by flush()), in the order it was written: every writer of the run's stderr (the
 * operation lines, the logger, the run's own messages) goes through the same gatherer, so their order is kept.
 */
const MAX_WAITING = 64 * 1024;

export interface GatheredLines {
  /** The stream to give the writers (only write() is used by them). */
  readonly stream: NodeJS.WritableStream;
  /** Writes what is waiting now. */
  flush(): void;
  /** Flushes and stops gathering (later writes go straight through). */
  close(): void;
}

export function gatherLines(target: NodeJS.WritableStream): GatheredLines {
  let waiting = '';
  let scheduled = false;
  let closed = false;
  const flush = (): void => {
    scheduled = false;
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    target.write(text);
  };
  // A process that exits before the end of the turn (a second Ctrl-C) still prints what was written.
  process.on('exit', flush);
  const write = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    if (closed) return target.write(chunk as string, ...(rest as []));
    waiting += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (waiting.length >= MAX_WAITING) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  };
  return {
    stream: { write } as unknown as NodeJS.WritableStream,
    flush,
    close: () => {
      flush();
      closed = true;
      process.off('exit', flush);
    },
  };
}

/** A run's streams: `tty` when the progress bar is drawn; without one, `err` is gathered (above). */
export interface RunStreams {
  readonly tty: boolean;
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
}

/**
 * `body` with the run's streams (defaults: process.stdout and stderr, a TTY when stderr is one). Without a terminal,
 * a line per operation goes on stderr, gathered into one write a turn; stdout (the summary) is written after what
 * stderr gathered before it.
 */
export async function withRunStreams<T>(given: Partial<RunStreams>, body: (streams: RunStreams) => Promise<T>): Promise<T> {
  const tty = given.tty ?? Boolean(process.stderr.isTTY);
  const out = given.out ?? process.stdout;
  if (tty) return body({ tty, out, err: given.err ?? process.stderr });
  const gathered = gatherLines(given.err ?? process.stderr);
  const outAfterErr = {
    write: (...a: Parameters<NodeJS.WritableStream['write']>): boolean => {
      gathered.flush();
      return out.write(...(a as [string]));
    },
  } as unknown as NodeJS.WritableStream;
  try {
    return await body({ tty, err: gathered.stream, out: outAfterErr });
  } finally {
    gathered.close();
  }
}
