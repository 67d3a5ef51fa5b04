/**
 * The facts of the long-conversation tests (compaction, provider compaction): each day's message states a code word,
 * and the last asks for day 1's, which the model can name only if that day's fact still reaches it.
 */
const WORDS = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper'];

export const codeWord = (day: number) => `${WORDS[(day - 1) % WORDS.length]}-${day * 7}`;
export const fact = (day: number) => `The code word of day ${day} is ${codeWord(day)}.`;
export const QUESTION = 'What was the code word of day 1?';
