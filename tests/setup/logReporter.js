'use strict';
/**
 * Listed before jest's default reporter (jest.config.js): when a test file fails, its failure message gets the
 * path of the file's background log (Temporal worker lines, webpack reports; tests/setup/testLogs.js) and that
 * log's last warnings and errors, so the default reporter prints them under the failure and in the summary
 * of failing tests. Passing files print nothing extra, and jest's summary stays the last thing printed.
 */
const fs = require('node:fs');
const { logFileFor, lastProblems, shown } = require('./testLogs');

const PROBLEM_LINES = 15;

class LogReporter {
  onTestFileResult(test, testResult) {
    if (!testResult.failureMessage) return;
    const file = logFileFor(testResult.testFilePath);
    if (!fs.existsSync(file)) return;
    const problems = lastProblems(file, PROBLEM_LINES);
    const lines = [`  Temporal worker and webpack output of this file: ${shown(file)}`];
    if (problems.length > 0) {
      lines.push(`  its last ${problems.length === 1 ? 'warning or error' : `${problems.length} warnings and errors`}:`);
      for (const line of problems) lines.push(`    ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`);
    }
    testResult.failureMessage = `${testResult.failureMessage.replace(/\n+$/, '')}\n\n${lines.join('\n')}\n`;
  }
}

module.exports = LogReporter;
