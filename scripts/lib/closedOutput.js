'use strict';
/**
 * A long-running script whose output goes to a pipe or socket (npm, a test runner, a terminal) outlives the reader
 * when that reader is killed: every later write then fails with EPIPE. Without a listener the failure is an
 * 'uncaughtException', and a handler that reports it by writing again fails again, for ever, at full CPU. This
 * takes the failure off the streams: `callback` runs once when the output has gone (the script then stops as if
 * told to), and `closed()` says whether to write at all.
 */
function onClosedOutput(callback, streams = [process.stdout, process.stderr]) {
  let closed = false;
  for (const stream of streams) {
    stream.on('error', (err) => {
      if (!err || err.code !== 'EPIPE') throw err;
      if (closed) return;
      closed = true;
      callback();
    });
  }
  return { closed: () => closed };
}

module.exports = { onClosedOutput };
