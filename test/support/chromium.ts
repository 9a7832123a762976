import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { onPath } from './system-tools';

/** The browsers looked for on PATH, Debian's package first; CHROMIUM names another. */
const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

/** The headless browser's path, or undefined when none is installed. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env.CHROMIUM?.trim();
  return named ? onPath(named) : onPath(...CANDIDATES);
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

/** What a page reported going wrong: uncaught exceptions, console errors, blocked scripts or styles. */
export interface PageError {
  kind: 'exception' | 'console' | 'log';
  text: string;
}

/**
 * Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the
 * browser reads commands from its fd 3 and writes answers and events to its fd 4, each message
 * JSON ended by a NUL), so a test can load a page, read what the browser rendered, click and take a
 * screenshot without a driver library or a network port.
 */
export class Browser {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void }
  >();
  private readonly listeners: Array<(message: Message) => void> = [];
  private buffer = '';
  private exited: string | undefined;
  readonly stderr: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const input = child.stdio[4] as Readable;
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => this.receive(chunk));
    (child.stdio[2] as Readable).on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
    child.on('exit', (code, signal) => {
      this.exited = `the browser exited (${signal ?? code})`;
      for (const { reject } of this.pending.values()) reject(new Error(this.exited));
      this.pending.clear();
    });
  }

  static launch(binary: string, size: { width: number; height: number }): Browser {
    const profile = mkdtempSync(path.join(tmpdir(), 'ixapi-chromium-'));
    const child = spawn(
      binary,
      [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--no-default-browser-check',
        '--hide-scrollbars',
        '--force-color-profile=srgb',
        `--window-size=${size.width},${size.height}`,
        `--user-data-dir=${profile}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    return new Browser(child, profile);
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\0')) !== -1) {
      const message = JSON.parse(this.buffer.slice(0, end)) as Message;
      this.buffer = this.buffer.slice(end + 1);
      if (message.id !== undefined) {
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) waiting?.reject(new Error(message.error.message));
        else waiting?.resolve(message.result ?? {});
      } else {
        for (const listener of [...this.listeners]) listener(message);
      }
    }
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string) {
    if (this.exited) return Promise.reject(new Error(this.exited));
    const id = this.nextId++;
    const answer = new Promise<Record<string, unknown>>((resolve, reject) =>
      this.pending.set(id, { resolve, reject }),
    );
    (this.child.stdio[3] as Writable).write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
    return answer;
  }

  /** Calls `listener` with every event until it returns true; resolves then, or rejects after `ms`. */
  until(listener: (message: Message) => boolean, ms: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.splice(this.listeners.indexOf(wrapped), 1);
        reject(new Error(`no ${what} within ${ms} ms`));
      }, ms);
      const wrapped = (message: Message) => {
        if (!listener(message)) return;
        clearTimeout(timer);
        this.listeners.splice(this.listeners.indexOf(wrapped), 1);
        resolve();
      };
      this.listeners.push(wrapped);
    });
  }

  on(listener: (message: Message) => void): void {
    this.listeners.push(listener);
  }

  /** A new tab showing `url` once its load event fired, with every error it reports collected. */
  async open(url: string, size: { width: number; height: number }): Promise<Page> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as {
      targetId: string;
    };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string;
    };
    const page = new Page(this, sessionId);
    await Promise.all([
      page.send('Page.enable'),
      page.send('Runtime.enable'),
      page.send('Log.enable'),
      page.send('Emulation.setDeviceMetricsOverride', {
        width: size.width,
        height: size.height,
        deviceScaleFactor: 1,
        mobile: false,
      }),
    ]);
    const loaded = this.until(
      (m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired',
      30_000,
      `load event of ${url}`,
    );
    const navigation = (await page.send('Page.navigate', { url })) as { errorText?: string };
    if (navigation.errorText) throw new Error(`cannot open ${url}: ${navigation.errorText}`);
    await loaded;
    return page;
  }

  async close(): Promise<void> {
    if (!this.exited) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      await this.send('Browser.close').catch(() => undefined);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}

export class Page {
  readonly errors: PageError[] = [];

  constructor(
    private readonly browser: Browser,
    private readonly sessionId: string,
  ) {
    browser.on((message) => {
      if (message.sessionId !== sessionId) return;
      const params = message.params ?? {};
      if (message.method === 'Runtime.exceptionThrown') {
        const details = params.exceptionDetails as {
          text: string;
          exception?: { description?: string };
        };
        this.errors.push({ kind: 'exception', text: details.exception?.description ?? details.text });
      } else if (message.method === 'Runtime.consoleAPICalled' && params.type === 'error') {
        const args = params.args as Array<{ value?: unknown; description?: string }>;
        this.errors.push({
          kind: 'console',
          text: args.map((a) => a.description ?? String(a.value)).join(' '),
        });
      } else if (message.method === 'Log.entryAdded') {
        const entry = params.entry as { level: string; text: string; source: string };
        // Blocked scripts and styles (a Content-Security-Policy refusing them) are logged as errors.
        if (entry.level === 'error')
          this.errors.push({ kind: 'log', text: `${entry.source}: ${entry.text}` });
      }
    });
  }

  send(method: string, params: Record<string, unknown> = {}) {
    return this.browser.send(method, params, this.sessionId);
  }

  /** The value of a JavaScript expression evaluated in the page (after what its own scripts did). */
  async evaluate<T>(expression: string): Promise<T> {
    const answer = (await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    })) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (answer.exceptionDetails)
      throw new Error(
        `${expression}: ${answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text}`,
      );
    return answer.result.value as T;
  }

  /** A PNG of the viewport. */
  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
    return Buffer.from(data, 'base64');
  }
}
