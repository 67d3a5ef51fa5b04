import { DurableAgentClient } from 'durable-agent';
import { z } from 'zod';

const Weather = z.object({ city: z.string(), celsius: z.number() });

const agent = await DurableAgentClient.connect();
// The answer must be JSON matching the schema; a mismatch goes back to the model (at most twice by default).
const result = await agent.ask('weather-7', 'How cold is it in Oslo?', {
  output: { schema: Weather, name: 'weather' },
});
if (result.output !== undefined) console.log(Weather.parse(result.output).celsius);
else console.error(result.stopReason, result.error?.message); // error:OutputInvalid when it never matched
await agent.close();
