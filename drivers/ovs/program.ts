import { execFile } from 'node:child_process';

/** What a program run for the fabric answered. */
export interface ProgramOutput {
  stdout: string;
  stderr: string;
}

/** A program of the fabric that failed: exited with a status, was killed, or could not start. */
export class ProgramError extends Error {
  constructor(
    readonly program: string,
    readonly stderr: string,
    readonly timedOut: boolean,
    readonly missing: boolean,
    readonly stdout = '',
  ) {
    super(stderr.trim() || `${program} failed`);
    this.name = 'ProgramError';
  }
}

/**
 * Runs `program` with `args` as they are (never through a shell), feeding it `input` when given.
 * Fails with a ProgramError holding what the program wrote to stderr.
 */
export function runProgram(
  program: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<ProgramOutput> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      program,
      args,
      { env: options.env, timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve({ stdout, stderr });
        const code = (error as NodeJS.ErrnoException).code;
        reject(
          new ProgramError(
            program,
            stderr || error.message,
            Boolean((error as { killed?: boolean }).killed) && error.signal === 'SIGTERM',
            code === 'ENOENT',
            stdout,
          ),
        );
      },
    );
    // A program that reads no input may exit before taking it; what it answered tells.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}
