// Reader for the TweetEval subset beside the project (../shared/data/tweeteval, or TWEETEVAL_DIR):
// one tweet per line in <split>_text.txt, one integer label per line in <split>_labels.txt.
// Some tweets carry literal JSON escapes from the dataset's export ("don\u2019t", "\u002c"); they
// are decoded here, as a data-cleaning step of this reader, not of the enrichment itself.
import fs from 'node:fs';
import path from 'node:path';

export const TWEETEVAL_DIR =
  process.env.TWEETEVAL_DIR ?? path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'tweeteval');

interface LabelledSplit {
  texts: string[];
  labels: number[];
  files: string[];
}

export function hasTweetEval(dir = TWEETEVAL_DIR): boolean {
  return fs.existsSync(path.join(dir, 'sentiment', 'val_text.txt')) && fs.existsSync(path.join(dir, 'emotion', 'train_text.txt'));
}

function lines(file: string): string[] {
  const s = fs.readFileSync(file, 'utf8');
  return (s.endsWith('\n') ? s.slice(0, -1) : s).split('\n');
}

function decodeEscapes(s: string): string {
  return s.replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** `task` is 'sentiment' or 'emotion' (or a stance target path); `split` 'train' or 'val'. */
export function loadSplit(task: string, split: 'train' | 'val', dir = TWEETEVAL_DIR): LabelledSplit {
  const tf = path.join(dir, task, `${split}_text.txt`);
  const lf = path.join(dir, task, `${split}_labels.txt`);
  const texts = lines(tf).map(decodeEscapes);
  const labels = lines(lf).map((l) => Number(l.trim()));
  if (texts.length !== labels.length) throw new Error(`${tf}: ${texts.length} texts but ${labels.length} labels`);
  if (labels.some((l) => !Number.isInteger(l))) throw new Error(`${lf}: non-integer label`);
  return { texts, labels, files: [path.relative(path.join(dir, '..'), tf), path.relative(path.join(dir, '..'), lf)] };
}
