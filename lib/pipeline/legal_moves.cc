// The legality rules of shape changes; see legal_moves.h.
#include "pipeline/legal_moves.h"

#include <optional>
#include <set>

#include "pipeline/op_table.h"
#include "pipeline/udf_table.h"

namespace plumber {
namespace {

MoveVerdict Refused(std::string reason) { return {false, std::move(reason)}; }

// The components a list of steps reads or writes; `all`: the whole
// element, whichever components it has.
struct Components {
  bool all = false;
  std::set<int> some;
  void Add(const schema::UdfOp& step, Touches t) {
    if (t == Touches::kElement) all = true;
    if (t == Touches::kComponent) some.insert(UdfStepComponent(step));
  }
  // A component both touch, as words; empty when none.
  std::string Shared(const Components& other) const {
    if ((all && (other.all || !other.some.empty())) || (other.all && !some.empty())) return "the whole element";
    for (int c : some) {
      if (other.some.count(c)) return "component " + std::to_string(c);
    }
    return "";
  }
};

// What the UDF of node i is made of, or the reason it cannot be known: a
// step without a row declares nothing.
struct UdfFacts {
  std::string unknown;   // a step without a row
  std::string random;    // the first random step
  std::string can_fail;  // the first step that can fail on bad data
  Components reads, writes;
};

UdfFacts FactsOf(const ProgramGraph& g, int i) {
  UdfFacts f;
  const NodeUdfSteps* steps = g.op(i).udf != nullptr ? g.op(i).udf(g.node(i)) : nullptr;
  if (steps == nullptr) return f;
  for (const auto& step : *steps) {
    const UdfOpDef* row = FindUdfOp(step.op());
    if (row == nullptr) {
      if (f.unknown.empty()) f.unknown = step.op();
      continue;
    }
    if (row->random && f.random.empty()) f.random = step.op();
    if (row->can_fail && f.can_fail.empty()) f.can_fail = step.op();
    f.reads.Add(step, row->reads);
    f.writes.Add(step, row->writes);
  }
  return f;
}

// What every move and fusion needs: `lower` is `upper`'s only input and
// feeds nothing else, both are ops of plumber's own with known UDF steps.
// `lower` is `upper`'s only input and feeds nothing else: what any change
// of the two needs, imported or not.
std::optional<MoveVerdict> Adjacent(const ProgramGraph& g, int upper, int lower) {
  const std::string& up = g.name(upper);
  const std::string& low = g.name(lower);
  if (g.inputs(upper).size() != 1 || g.inputs(upper)[0] != lower) {
    return Refused(low + " is not the only input of " + up);
  }
  if (g.consumers(lower).size() != 1 || g.output() == lower) {
    return Refused(low + " feeds more than " + up + ": its other readers would see the change");
  }
  return std::nullopt;
}

std::optional<MoveVerdict> Structure(const ProgramGraph& g, int upper, int lower) {
  if (auto refused = Adjacent(g, upper, lower)) return refused;
  for (int i : {upper, lower}) {
    if (g.op(i).imported_only || !g.node(i).imported_type().empty()) {
      return Refused(g.name(i) + " is imported: plumber cannot see what it does, so it never moves");
    }
    if (const UdfFacts f = FactsOf(g, i); !f.unknown.empty()) {
      return Refused(g.name(i) + "'s step '" + f.unknown + "' declares nothing, so it never moves");
    }
  }
  return std::nullopt;
}

// A map: an op with a UDF that makes one element of each.
bool IsMap(const ProgramGraph& g, int i) { return g.op(i).udf != nullptr && NodeKeeps(g.node(i)).count; }

}  // namespace

MoveVerdict CanMoveAbove(const ProgramGraph& g, int upper, int lower, const LegalityOptions& options) {
  if (auto refused = Structure(g, upper, lower)) return *refused;
  const std::string& up = g.name(upper);
  const std::string& low = g.name(lower);
  const std::string& kind = g.node(upper).op();  // for the reasons only
  const MovesAboveMap moves = g.op(upper).moves_above_map;
  if (moves == MovesAboveMap::kNever) {
    return Refused("only a filter, take, skip or shuffle moves above its input, not a " + kind);
  }
  // Every other op changes what the elements are or where they are: a
  // shuffle their order, a batch and an interleave their grouping, a repeat
  // their count, a cache and a prefetch what is kept and when. No rule says
  // what crossing them keeps.
  if (!IsMap(g, lower)) return Refused("no rule moves a " + kind + " above a " + g.node(lower).op());
  const UdfFacts map = FactsOf(g, lower);
  if (moves == MovesAboveMap::kPrefix) {
    return {true, "the first elements of " + low + " are the same elements, with the same indices, whether " + up +
                      " counts them before or after it"};
  }
  if (!map.random.empty()) {
    return Refused(low + " is random (" + map.random + "): its draws follow each element's index, which " + up +
                   " above it would change");
  }
  if (!map.can_fail.empty() && !options.assume_valid_data) {
    return Refused(low + " can fail on bad data (" + map.can_fail + "): " + up +
                   (moves == MovesAboveMap::kPermutes ? " above it would move where a bad record stops the pipeline"
                                                      : " above it would hide the failures of the elements it drops"));
  }
  // On data the user vouches for, what fails only on bad data does not fail.
  const std::string vouched = map.can_fail.empty() ? "" : " on data assumed valid";
  if (moves == MovesAboveMap::kSkipsPrefix) {
    return {true, low + " is deterministic and cannot fail" + vouched +
                      ": skipping before it drops the same elements"};
  }
  if (moves == MovesAboveMap::kPermutes) {
    return {true, low + " is deterministic and cannot fail" + vouched + ", and " + up +
                      "'s draws never depend on what the elements hold: it gives the same permutation before " + low +
                      " as after it"};
  }
  const UdfFacts predicate = FactsOf(g, upper);
  if (const std::string shared = map.writes.Shared(predicate.reads); !shared.empty()) {
    return Refused(low + " writes " + shared + ", which " + up + "'s predicate reads");
  }
  return {true, low + " is deterministic, cannot fail" + vouched + " and writes nothing " + up +
                    "'s predicate reads: the same elements pass, in the same order"};
}

MoveVerdict ImportedMoveConditions(const ProgramGraph& g, int upper, int lower) {
  if (auto refused = Adjacent(g, upper, lower)) return *refused;
  const std::string& up = g.name(upper);
  const std::string& low = g.name(lower);
  const MovesAboveMap moves = g.op(upper).moves_above_map;
  if (moves == MovesAboveMap::kNever || !IsMap(g, lower)) {
    return Refused("no rule moves a " + g.node(upper).op() + " above a " + g.node(lower).op());
  }
  // What plumber's own rows would have declared, asked of the user.
  const std::string function = low + "'s function ";
  switch (moves) {
    case MovesAboveMap::kPrefix:
      return {true, "the first elements of " + low + " are the same elements, with the same indices, either way"};
    case MovesAboveMap::kSkipsPrefix:
      return {true, "if " + function + "is deterministic (no random op, or one seeded per element) and never fails on "
                    "your data: then skipping before it drops the same elements"};
    case MovesAboveMap::kPermutes:
      return {true, "if " + function + "is deterministic and never fails on your data: the shuffle's draws do not "
                    "depend on the elements, so it gives the same permutation before " + low + " as after it"};
    default:
      return {true, "if " + function + "is deterministic, never fails on your data, and passes through unchanged "
                    "everything " + up + "'s predicate reads (a label, say), so that the predicate can take " + low +
                    "'s input: then the same elements pass, in the same order"};
  }
}

MoveVerdict CanFuseMaps(const ProgramGraph& g, int upper, int lower) {
  if (auto refused = Structure(g, upper, lower)) return *refused;
  if (!IsMap(g, upper) || !IsMap(g, lower)) return Refused("only two maps fuse into one");
  return {true, "one map running " + g.name(lower) + "'s steps then " + g.name(upper) +
                    "'s gives each element the same steps in the same order, with the same index"};
}

MoveVerdict CanFuseFilter(const ProgramGraph& g, int upper, int lower) {
  if (auto refused = Structure(g, upper, lower)) return *refused;
  if (g.op(upper).moves_above_map != MovesAboveMap::kPredicate || !IsMap(g, lower)) {
    return Refused("only a filter fuses into the map below it, and only into one that keeps every element");
  }
  const UdfFacts predicate = FactsOf(g, upper);
  if (!predicate.random.empty() && !NodeKeeps(g.node(lower)).order) {
    return Refused(g.name(upper) + "'s predicate is random (" + predicate.random + ") and " + g.name(lower) +
                   " does not keep order: its draws follow each element's position, which would change");
  }
  return {true, g.name(lower) + " makes one element of each, in order: testing " + g.name(upper) +
                    "'s predicate at the end of its steps drops the same elements, with the same index"};
}

}  // namespace plumber
