// Reading a --kubeconfig file, apart from the client: a command can name a path that cannot serve
// (missing, a folder, empty) before it loads the Kubernetes client, about a second of CPU.
import { readFileArgument } from '../util/file-argument.js';

export const KUBECONFIG_EXPECTED = 'a kubeconfig (clusters, contexts and users, as kubectl config view --raw prints it)';

/** The text of a --kubeconfig file; a missing, unreadable, directory or blank file is a one-line error. */
export function readKubeconfigFile(path: string): string {
  return readFileArgument('--kubeconfig', path, { expected: KUBECONFIG_EXPECTED });
}
