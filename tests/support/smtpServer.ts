/**
 * A real SMTP server for tests: PyPI's aiosmtpd (installed into .tools/ by scripts/lib/tools.js on first use), run as
 * `python3 -m aiosmtpd -n -l 127.0.0.1:<port>`, which accepts every message and prints it. The printed messages are
 * parsed here (headers unfolded, a quoted-printable or base64 body decoded) for the tests to assert on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

// plain JS module shared with npm start
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as { ensureAiosmtpd: () => { python: string; pythonPath: string } };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort: () => Promise<number> };

export interface ReceivedMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  headers: Record<string, string>;
}

export interface SmtpServer {
  url: string;
  port: number;
  messages: ReceivedMail[];
  /**
   * The first message (not taken before) that matches, waiting up to `timeoutMs`. Verification links (each sign-up
   * sends one; createTestUser then marks the account verified) are passed over unless `{ verification: true }`.
   */
  next: (match?: (m: ReceivedMail) => boolean, timeoutMs?: number, options?: { verification?: boolean }) => Promise<ReceivedMail>;
  close: () => Promise<void>;
}

/** The subject of the verification e-mail a sign-up sends (services/accounts/accountMail.ts). */
export const VERIFICATION_SUBJECT = 'Verify your e-mail address for Render Studio';

const BEGIN = '---------- MESSAGE FOLLOWS ----------';
const END = '------------ END MESSAGE ------------';

function decodeQuotedPrintable(body: string): string {
  const bytes = Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return bytes.toString('utf8');
}

/** RFC 2047 encoded words (`=?utf-8?Q?...?=` / `?B?`) in a header value. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_, _charset: string, kind: string, text: string) =>
    kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

export function parsePrintedMessage(block: string): ReceivedMail {
  const lines = block.replace(/\r/g, '').split('\n');
  const blank = lines.indexOf('');
  const headerLines = lines.slice(0, blank === -1 ? lines.length : blank);
  const headers: Record<string, string> = {};
  let last = '';
  for (const line of headerLines) {
    if (/^\s/.test(line) && last) headers[last] += ` ${line.trim()}`;
    else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      last = line.slice(0, colon).toLowerCase();
      headers[last] = line.slice(colon + 1).trim();
    }
  }
  for (const key of Object.keys(headers)) headers[key] = decodeWords(headers[key]);
  let text = blank === -1 ? '' : lines.slice(blank + 1).join('\n');
  const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(text);
  else if (encoding === 'base64') text = Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { from: headers.from ?? '', to: headers.to ?? '', subject: headers.subject ?? '', text, headers };
}

async function waitForPort(port: number, child: ChildProcess, output: () => string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`aiosmtpd exited with ${child.exitCode}: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`aiosmtpd did not listen on ${port} within ${timeoutMs} ms: ${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts aiosmtpd on a free 127.0.0.1 port (installing it on first use). */
export async function startSmtpServer(): Promise<SmtpServer> {
  const { python, pythonPath } = tools.ensureAiosmtpd();
  const port = await services.freePort();
  const child = spawn(python, ['-u', '-m', 'aiosmtpd', '-n', '-l', `127.0.0.1:${port}`], {
    env: { ...process.env, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let pending = '';
  const messages: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (err += chunk));
  child.stdout!.on('data', (chunk: string) => {
    out += chunk;
    pending += chunk;
    for (;;) {
      const start = pending.indexOf(BEGIN);
      const end = pending.indexOf(END, start + 1);
      if (start === -1 || end === -1) break;
      messages.push(parsePrintedMessage(pending.slice(start + BEGIN.length, end).replace(/^\r?\n/, '')));
      pending = pending.slice(end + END.length);
    }
    for (const w of waiters.splice(0)) w();
  });
  await waitForPort(port, child, () => out + err);
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    next: (match = () => true, timeoutMs = 10_000, options = {}) =>
      new Promise<ReceivedMail>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching e-mail within ${timeoutMs} ms; got ${JSON.stringify(messages)}`)), timeoutMs);
        const look = () => {
          const found = messages.find((m) => !taken.has(m) && (options.verification || m.subject !== VERIFICATION_SUBJECT) && match(m));
          if (!found) return void waiters.push(look);
          taken.add(found);
          clearTimeout(timer);
          resolve(found);
        };
        look();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
