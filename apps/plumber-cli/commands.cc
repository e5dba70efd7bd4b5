// The one table of subcommands. Add a row (and a cmd_NAME.cc with its setup
// function) to add a subcommand; main.cc needs no change.
#include "command.h"

#include <array>

namespace plumber::cli {

Handler SetupConvert(CLI::App& app);
Handler SetupGen(CLI::App& app);
Handler SetupRun(CLI::App& app);
Handler SetupValidate(CLI::App& app);
Handler SetupVersion(CLI::App& app);

namespace {

constexpr std::array kCommands = {
    Command{"convert", "Convert a pipeline or trace between JSON and binary", &SetupConvert},
    Command{"gen", "Write test data (TFRecord images or text) for pipelines", &SetupGen},
    Command{"run", "Run a pipeline as a training loop would and trace it", &SetupRun},
    Command{"validate", "Check a pipeline or trace file and summarise it", &SetupValidate},
    Command{"version", "Print the version of plumber", &SetupVersion},
};

}  // namespace

std::span<const Command> Commands() { return kCommands; }

}  // namespace plumber::cli
