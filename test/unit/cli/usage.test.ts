/** Usage errors: unknown options as typed, and the "did you mean" suggestion. */

import { unknownOptionMessage, unknownOptions } from '../../../src/cli/usage.js';
import { didYouMean } from '../../../src/did-you-mean.js';

describe('didYouMean', () => {
  test.each<[string, string[], string]>([
    ['rnu', ['run', 'demo'], ": did you mean 'run'?"],
    ['demi', ['run', 'demo'], ": did you mean 'demo'?"],
    ['serve', ['run', 'demo'], ''],
    ['auht', ['auth'], ": did you mean 'auth'?"],
    ['x', ['auth'], ''],
    ['run', ['run', 'demo'], ''],
  ])('%j among %j → %j', (word, candidates, hint) => {
    expect(didYouMean(word, candidates)).toBe(hint);
  });
});

describe('unknownOptions', () => {
  test('reports what meow parsed and tablegate does not know, as typed', () => {
    expect(
      unknownOptions({
        h: 'db',
        host: 'db',
        D: 'x',
        database: 'x',
        listenHost: '::',
        help: false,
        databse: 'x',
        listenHots: '1',
        x: true,
      }),
    ).toEqual(['--databse', '--listen-hots', '-x']);
  });
});

describe('unknownOptionMessage', () => {
  test.each([
    ['--databse', 'unknown option --databse: did you mean --database?'],
    ['--pool-sise', 'unknown option --pool-sise: did you mean --pool-size?'],
    ['--hlep', 'unknown option --hlep: did you mean --help?'],
    ['--colour', 'unknown option --colour'],
    ['-x', 'unknown option -x'],
  ])('%s → %s', (option, message) => {
    expect(unknownOptionMessage(option)).toBe(message);
  });
});
