// JSON output for scripts (`--json`): one document, two-space indented, ending in a newline.

export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
