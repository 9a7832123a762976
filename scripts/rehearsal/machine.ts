import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { say } from './phases';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A frontend port whose whole block (the services' ports, see config/temporal) is free. */
export async function temporalPortBase(): Promise<number> {
  for (let base = 27233; base < 60000; base += 1000) {
    const ports = [0, 1, 2, 6, 10, -300, -299, -298, -294].map((offset) => base + offset);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error('no free block of ports for the Temporal server');
}

export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    if (await portFree(port)) return port;
  }
}

/** PostgreSQL must answer on 127.0.0.1:5432; the machine's cluster is started when it is down. */
export async function postgresUp(): Promise<void> {
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(5432, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  if (await answers()) return;
  say('PostgreSQL is not answering on 127.0.0.1:5432; starting the machine’s cluster');
  const version = execFileSync('ls', ['/etc/postgresql'], { encoding: 'utf8' }).trim().split('\n')[0];
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], {
    stdio: 'inherit',
  });
  for (let i = 0; i < 30 && !(await answers()); i += 1) await sleep(1000);
  if (!(await answers())) throw new Error('PostgreSQL did not start');
}
