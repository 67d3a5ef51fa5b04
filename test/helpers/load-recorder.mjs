// Records the URL of every module a process loads, one a line, in the file LOAD_RECORD_FILE names
// (`node --import ./test/helpers/load-recorder.mjs`): what an entry point pulls in when it is imported.
import { register } from 'node:module';

register(new URL('./load-recorder-hooks.mjs', import.meta.url));
