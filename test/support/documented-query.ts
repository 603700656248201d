import { readFile } from 'node:fs/promises';

/** The SQL block that follows `<!-- query: name -->` in a docs page, exactly as written. */
export async function documentedQuery(page: URL, name: string): Promise<string> {
  const text = await readFile(page, 'utf8');
  const match = new RegExp(`<!-- query: ${name} -->\\n\`\`\`sql\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (match === null) throw new Error(`${page.pathname} has no query ${name}`);
  return match[1] as string;
}
