import { describe, expect, it } from 'vitest';
import { NOTES_HEADING, withKeptNotes } from '../../../bench/report-markdown.js';

// A full `npm run bench` rewrites BENCHMARKS.md's generated report and keeps the notes written by hand below it.

const notes = `${NOTES_HEADING}\n\nStop 26: a peer run.\n\n## Stop 25\n\nprofiles\n`;

describe('withKeptNotes', () => {
  it('puts the new report before the notes of the file it replaces, dropping the old report', () => {
    const existing = `# Benchmarks\n\nold report\n\n${notes}`;
    expect(withKeptNotes('# Benchmarks\n\nnew report\n', existing)).toBe(`# Benchmarks\n\nnew report\n\n${notes}`);
  });

  it('writes the report alone when there is no file or it has no notes', () => {
    expect(withKeptNotes('# Benchmarks\n', undefined)).toBe('# Benchmarks\n');
    expect(withKeptNotes('# Benchmarks\n', '# Benchmarks\n\nold report\n')).toBe('# Benchmarks\n');
  });

  it('keeps notes only from the heading on its own line, not a mention of it', () => {
    const existing = `# Benchmarks\n\nsee "${NOTES_HEADING}" below\n`;
    expect(withKeptNotes('# new\n', existing)).toBe('# new\n');
  });
});
