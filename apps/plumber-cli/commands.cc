// The one table of subcommands. Add a row (and a cmd_NAME.cc with its setup
// function) to add a subcommand; main.cc needs no change.
#include "command.h"

#include <array>

namespace plumber::cli {

Handler SetupAnalyze(CLI::App& app);
Handler SetupCheck(CLI::App& app);
Handler SetupConvert(CLI::App& app);
Handler SetupDemo(CLI::App& app);
Handler SetupDiff(CLI::App& app);
Handler SetupGen(CLI::App& app);
Handler SetupHelp(CLI::App& app);
Handler SetupImport(CLI::App& app);
Handler SetupOptimize(CLI::App& app);
Handler SetupProvision(CLI::App& app);
Handler SetupRank(CLI::App& app);
Handler SetupRewrite(CLI::App& app);
Handler SetupRun(CLI::App& app);
Handler SetupValidate(CLI::App& app);
Handler SetupVersion(CLI::App& app);

namespace {

constexpr std::array kCommands = {
    Command{"analyze", "Model a trace: rates, bounds, bottleneck, sizes and findings", &SetupAnalyze},
    Command{"check", "Fail (exit 1) when a trace misses its thresholds or regresses from a baseline", &SetupCheck},
    Command{"convert", "Convert a pipeline or trace between JSON and binary", &SetupConvert},
    Command{"demo", "Generate images, optimize the naive image pipeline, show before and after", &SetupDemo},
    Command{"diff", "What changed between two traces or two pipelines", &SetupDiff},
    Command{"gen", "Write test data (TFRecord images or text) for pipelines", &SetupGen},
    Command{"help", "Show the manual page of plumber or of a subcommand", &SetupHelp},
    Command{"import", "Turn tf.data model dumps or Plumber PipelineSnapshots into a plumber trace", &SetupImport},
    Command{"optimize", "Trace, rewrite and re-run a pipeline until it stops getting faster", &SetupOptimize},
    Command{"provision", "Least-cost cores, memory and bandwidth that reach a target rate", &SetupProvision},
    Command{"rank", "Rank a trace's nodes by parallelism-scaled rate, slowest first", &SetupRank},
    Command{"rewrite", "Write the pipeline the optimizer plans: parallelism, cache, prefetch", &SetupRewrite},
    Command{"run", "Run a pipeline as a training loop would and trace it", &SetupRun},
    Command{"validate", "Check a pipeline or trace file and summarise it", &SetupValidate},
    Command{"version", "Print the version of plumber", &SetupVersion},
};

}  // namespace

std::span<const Command> Commands() { return kCommands; }

}  // namespace plumber::cli
