// The configuration lives in src/config/; this module keeps the paths other modules import.
export {
  configure,
  ENVIRONMENT_VARIABLES,
  optionsFromEnvironment,
  parseBooleanText,
} from './config/environment.js';
