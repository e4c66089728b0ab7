/** `--odata-basic on|off` (docs/odata-batch.md, "Basic authentication"): auth mode only. */
import { configFromRun, UsageError } from '../../../src/cli/options.js';

const FLAGS = {
  host: 'db',
  user: 'app',
  password: '',
  port: '3306',
  database: 'shop',
  listen: '8080',
};

describe('--odata-basic', () => {
  test('on, off and the environment; absent leaves the config without it (on)', () => {
    expect(configFromRun(['auth'], FLAGS, {}).odataBasic).toBeUndefined();
    expect(configFromRun(['auth'], { ...FLAGS, odataBasic: 'off' }, {}).odataBasic).toBe('off');
    expect(configFromRun(['auth'], { ...FLAGS, odataBasic: 'ON' }, {}).odataBasic).toBe('on');
    expect(configFromRun(['auth'], FLAGS, { TABLEGATE_ODATA_BASIC: 'off' }).odataBasic).toBe('off');
  });

  test('another value, or open mode, is a usage error', () => {
    expect(() => configFromRun(['auth'], { ...FLAGS, odataBasic: 'maybe' }, {})).toThrow(
      new UsageError("--odata-basic must be on or off, got 'maybe'"),
    );
    expect(() => configFromRun([], { ...FLAGS, odataBasic: 'off' }, {})).toThrow(
      /--odata-basic is for auth mode/,
    );
  });
});
