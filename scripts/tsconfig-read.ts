/** The project's tsconfig.json as the compiler reads it, for the checks that use the type checker. */
import { join } from "node:path";
import ts from "typescript";

export function readTsConfig(root: string): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("tsconfig.json could not be read");
  return config;
}
