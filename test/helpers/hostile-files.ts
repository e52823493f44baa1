// Hostile file contents shared by test/cli/hostile-input.test.ts and bench/hostile-cli.ts.

/**
 * YAML "billion laughs": 10 levels of anchors, each a list of 10 aliases of the one before, so that
 * expanding it makes 10^levels nodes from a few hundred bytes.
 */
export function billionLaughsYaml(levels = 10): string {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < levels; i++)
    lines.push(
      `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

/** `depth` nested flow sequences, `[[[…]]]`: valid YAML and valid JSON. */
export function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}
