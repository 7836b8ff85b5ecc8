// Types of build-stamp.mjs for the tests that import it.
export function listFiles(dir: string, keep: (name: string) => boolean, skip?: string[]): string[];
export function hashInputs(root: string, files: string[], extra?: string[]): string;
export function checkStamp(stampFile: string, hash: string): { current: true } | { current: false; reason: string };
export function writeStamp(stampFile: string, hash: string, outputs: string[]): void;
export function packageVersion(root: string, name: string): string;
