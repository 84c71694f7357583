import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lexer, type Token, type Tokens } from 'marked';

/** The languages of blocks a reader pastes into a shell; other fences are diagrams, payloads or output. */
const SHELL = new Set(['bash', 'sh', 'shell']);
/** `<!-- doc-test: skip — why -->` right above a block keeps it out of the run; the reason is required. */
const SKIP = /^<!--\s*doc-test:\s*skip\s*[—-]\s*(\S.*?)\s*-->$/;

export interface DocCommand {
  /** `docs/webhooks.md#2`: the file and the block's place among its shell blocks. */
  name: string;
  script: string;
  skipReason?: string;
}

/** The documents whose commands must work: README.md, docs/*.md and the deployment guide. */
export function documentedFiles(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs, 'deploy/README.md'];
}

export function shellBlocks(root: string, file: string): DocCommand[] {
  const tokens = lexer(readFileSync(path.join(root, file), 'utf8'));
  const blocks: DocCommand[] = [];
  let previous: Token | undefined;
  for (const token of tokens) {
    if (token.type === 'code' && SHELL.has((token as Tokens.Code).lang ?? '')) {
      const marker = previous?.type === 'html' ? SKIP.exec(previous.raw.trim()) : null;
      blocks.push({
        name: `${file}#${blocks.length + 1}`,
        script: (token as Tokens.Code).text,
        skipReason: marker?.[1],
      });
    }
    if (token.type !== 'space') previous = token;
  }
  return blocks;
}
