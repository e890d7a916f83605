/**
 * The helper process of providers/media/launcher.ts: starts ffmpeg and ffprobe for its parent, relays their output
 * and exit over the IPC channel, and kills what it started when the parent goes away. Plain CommonJS with no
 * dependencies, so it starts as a bare node of a few tens of MB: forking from it is cheap, where forking from a worker
 * of ~1 GB RSS blocked the worker's event loop for tens of milliseconds per process.
 *
 * Messages in:  { type: 'spawn', id, file, args } and { type: 'kill', id, signal }.
 * Messages out: { type: 'stdout' | 'stderr', id, data } (Buffer), { type: 'error', id, message, code },
 *               { type: 'close', id, code, signal }.
 */
'use strict';
const { spawn } = require('node:child_process');

const running = new Map();

function send(message) {
  if (process.connected) process.send(message);
}

process.on('message', (message) => {
  if (message.type === 'spawn') {
    let child;
    try {
      child = spawn(message.file, message.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      send({ type: 'error', id: message.id, message: error.message, code: error.code });
      send({ type: 'close', id: message.id, code: null, signal: null });
      return;
    }
    running.set(message.id, child);
    child.stdout.on('data', (data) => send({ type: 'stdout', id: message.id, data }));
    child.stderr.on('data', (data) => send({ type: 'stderr', id: message.id, data }));
    child.on('error', (error) => send({ type: 'error', id: message.id, message: error.message, code: error.code }));
    child.on('close', (code, signal) => {
      running.delete(message.id);
      send({ type: 'close', id: message.id, code, signal });
    });
  } else if (message.type === 'kill') {
    running.get(message.id)?.kill(message.signal);
  }
});

// the parent exited or was killed: nothing may outlive it
process.on('disconnect', () => {
  for (const child of running.values()) child.kill('SIGKILL');
  process.exit(0);
});
