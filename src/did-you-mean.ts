/**
 * The "did you mean …?" of usage errors: the closest known word within two edits (Levenshtein
 * distance, from `leven`), so `--databse` suggests `--database` and `serve` suggests nothing.
 */
import { closestMatch } from 'leven';

/** `: did you mean 'x'?` for a word within two edits of a candidate, else ''. */
export function didYouMean(word: string, candidates: readonly string[], quote = "'"): string {
  const match = closestMatch(word, candidates, { maxDistance: Math.min(2, word.length - 1) });
  return match === undefined || match === word ? '' : `: did you mean ${quote}${match}${quote}?`;
}
