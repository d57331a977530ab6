/**
 * The local form of a Box web link: a small file in the Internet-shortcut format (`NAME.url`), which desktop
 * environments open in a browser. Download-only: its content is always derived from the remote target.
 */
export function weblinkFileContent(url: string): string {
  return `[InternetShortcut]\r\nURL=${url}\r\n`;
}
