// The nodejs build of the module (wasm/pkg-node, made by scripts/wasm-build) and
// the paths the tests read.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The repository root. */
export const repoRoot = resolve(here, '../../..');

const pkg = join(repoRoot, 'wasm/pkg-node/ach_wasm.js');
if (!existsSync(pkg)) {
  throw new Error(`${pkg} is missing: run scripts/wasm-build first`);
}

/** The module: validateTransaction, …, class Engine. */
export const ach = createRequire(import.meta.url)(pkg);

/** `shared/data` beside the repository (override with ACH_SHARED_DATA). */
export const sharedData = process.env.ACH_SHARED_DATA ?? resolve(repoRoot, '../shared/data');
