import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The section names of an INI file (`[name]`, trimmed); none when it cannot be read. */
function sections(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*\[([^\]]*)\]/.exec(line);
    if (m !== null) names.push((m[1] as string).trim());
  }
  return names;
}

/**
 * When no credentials were found and AWS_PROFILE names a profile: which one, and whether the
 * shared files the AWS SDK reads hold it (`[profile name]` or `[default]` in the config file,
 * `[name]` in the credentials file). Undefined without AWS_PROFILE.
 */
export function profileNote(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const profile = env.AWS_PROFILE;
  if (profile === undefined || profile === '') return undefined;
  const home = env.HOME || homedir();
  const config = env.AWS_CONFIG_FILE || join(home, '.aws', 'config');
  const credentials = env.AWS_SHARED_CREDENTIALS_FILE || join(home, '.aws', 'credentials');
  const inConfig = sections(config).some((name) => {
    const words = name.split(/\s+/);
    return (
      (words[0] === 'profile' && words[1] === profile && words.length === 2) ||
      (profile === 'default' && name === 'default')
    );
  });
  const inCredentials = sections(credentials).includes(profile);
  if (!inConfig && !inCredentials) {
    return `AWS_PROFILE names the profile "${profile}", which is in neither ${config} nor ${credentials}`;
  }
  const where = [inConfig ? config : '', inCredentials ? credentials : ''].filter(Boolean);
  return `AWS_PROFILE names the profile "${profile}" (in ${where.join(' and ')}), which gave no credentials`;
}
