// Preloaded into a profiled server (node --cpu-prof --require …): SIGUSR2 ends the process with
// process.exit(), so Node writes the CPU profile (it does not when a process dies of a signal).
process.on('SIGUSR2', () => process.exit(0));
