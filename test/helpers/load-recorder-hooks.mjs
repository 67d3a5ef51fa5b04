// The loader hooks of load-recorder.mjs. They run on the loader's own thread, so they write straight to the file.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.LOAD_RECORD_FILE, `${url}\n`);
  return nextLoad(url, context);
}
