/** A one-line spinner on a terminal; does nothing when the output is not a TTY (pipes, files, CI logs). */
export class Spinner {
  private static readonly frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private text = '';
  private shown = false;

  constructor(private readonly output: NodeJS.WriteStream = process.stdout) {}

  get enabled(): boolean {
    return this.output.isTTY === true;
  }

  /** Show (or update) the spinner with `text`. */
  update(text: string): void {
    this.text = text;
    if (!this.enabled) return;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), 100);
      this.timer.unref();
    }
    this.draw();
  }

  /** Remove the spinner line so other output can be written; `update` brings it back. */
  clear(): void {
    if (this.shown) this.output.write('\r\x1b[2K');
    this.shown = false;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  /** Write a line above the spinner. */
  print(line: string): void {
    this.clear();
    this.output.write(`${line}\n`);
    if (this.timer !== undefined) this.draw();
  }

  private draw(): void {
    this.frame = (this.frame + 1) % Spinner.frames.length;
    this.output.write(`\r\x1b[2K${Spinner.frames[this.frame]} ${this.text}`);
    this.shown = true;
  }
}
