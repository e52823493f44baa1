/**
 * Options of {@link measureBrowser}: validation and completion of the schema in src/model. The CLI
 * (`src/cli/browser.ts`) maps flags onto it; unknown keys are rejected.
 */
import { H2labError, unknownOptionError } from '../core/index.ts';
import { type BrowserOptions, type BrowserOptionsInput, BrowserOptionsSchema } from '../model/index.ts';

/**
 * Validates and completes options. Throws H2LAB_ERR_INVALID_OPTION naming the first bad key.
 */
export function resolveBrowserOptions(input: BrowserOptionsInput = {}): BrowserOptions {
  const r = BrowserOptionsSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const unknown = unknownOptionError(issue, 'measureBrowser', Object.keys(BrowserOptionsSchema.shape));
    if (unknown) throw unknown;
    const key = issue.path.join('.') || '(options)';
    throw new H2labError('H2LAB_ERR_INVALID_OPTION', `browser option ${key}: ${issue.message}`, {
      option: key,
      value: issue.path.reduce<unknown>(
        (o, k) =>
          o && typeof o === 'object' ? (o as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined,
        input,
      ),
    });
  }
  const opts = r.data;
  for (const o of opts.origins) parseOrigin(o);
  return opts;
}

/**
 * Checks that `text` is an `http:` or `https:` origin and returns it normalised (no trailing slash).
 * A path is not allowed: the experiments choose their paths with the path template.
 */
export function parseOrigin(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `origin ${JSON.stringify(text)} is not a URL: use e.g. https://127.0.0.1:8443`,
      {
        option: 'ORIGIN',
        value: text,
      },
    );
  }
  if (
    (u.protocol !== 'http:' && u.protocol !== 'https:') ||
    (u.pathname !== '/' && u.pathname !== '') ||
    u.search
  ) {
    throw new H2labError(
      'H2LAB_ERR_INVALID_OPTION',
      `origin ${JSON.stringify(text)} must be http:// or https:// with no path or query (set paths with --path-template)`,
      { option: 'ORIGIN', value: text },
    );
  }
  return u.origin;
}
