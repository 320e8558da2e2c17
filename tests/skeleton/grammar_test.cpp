// The grammar of skeleton/ (issue #25): what is appended expands back
// exactly, loops become exponents, nested loops take O(1) rules, the work
// per append stays bounded, and a full grammar refuses without damage.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "skeleton/skeleton.h"

namespace {

struct Grammar {
    std::vector<uint64_t> memory;
    adt_skeleton_grammar *grammar;
    explicit Grammar(uint32_t symbols = 1u << 16, uint32_t rules = 1u << 14, uint32_t digram_log2 = 17)
        : memory(adt_skeleton_grammar_bytes(symbols, rules, digram_log2) / 8 + 1),
          grammar(adt_skeleton_grammar_init(memory.data(), symbols, rules, digram_log2))
    {
    }
    bool append(uint32_t terminal) { return adt_skeleton_grammar_append(grammar, terminal); }
};

struct Exported {
    std::vector<uint32_t> starts, values, exponents, scratch;
    adt_skeleton_rules rules{};
    explicit Exported(adt_skeleton_grammar *g)
        : starts((adt_skeleton_grammar_settle(g), adt_skeleton_grammar_rules(g) + 1)),
          values(adt_skeleton_grammar_symbols(g)), exponents(adt_skeleton_grammar_symbols(g)),
          scratch(adt_skeleton_grammar_rule_capacity(g))
    {
        rules = { 0, starts.data(), values.data(), exponents.data() };
        adt_skeleton_grammar_export(g, &rules, scratch.data());
    }
    std::vector<uint32_t> expand() const
    {
        std::vector<uint32_t> out;
        adt_skeleton_rules_expand(
            &rules,
            [](uint32_t terminal, void *arg) {
                static_cast<std::vector<uint32_t> *>(arg)->push_back(terminal);
                return true;
            },
            &out);
        return out;
    }
    uint32_t symbol_count() const { return starts[rules.rule_count]; }
};

std::vector<uint32_t> fold_and_expand(Grammar &g, const std::vector<uint32_t> &input)
{
    for (uint32_t t : input)
        EXPECT_TRUE(g.append(t));
    EXPECT_EQ(adt_skeleton_grammar_length(g.grammar), input.size());
    return Exported(g.grammar).expand();
}

TEST(SkeletonGrammar, RandomSequencesExpandBackExactly)
{
    std::mt19937 random(25);
    for (int round = 0; round < 200; ++round) {
        uint32_t alphabet = 1 + random() % 6;
        size_t length = random() % 3000;
        std::vector<uint32_t> input(length);
        for (auto &t : input)
            t = random() % alphabet;
        Grammar g;
        ASSERT_EQ(fold_and_expand(g, input), input) << "round " << round << " alphabet " << alphabet;
    }
}

// Sequences with structure: random loop nests, the kind of input where
// twins, rule reuse and inlining all happen.
void nest(std::mt19937 &random, int depth, std::vector<uint32_t> &out)
{
    int parts = 1 + random() % 3;
    for (int p = 0; p < parts; ++p) {
        if (depth > 0 && random() % 2) {
            std::vector<uint32_t> body;
            nest(random, depth - 1, body);
            int times = 1 + random() % 7;
            for (int i = 0; i < times; ++i)
                out.insert(out.end(), body.begin(), body.end());
        } else {
            out.push_back(random() % 5);
        }
    }
}

TEST(SkeletonGrammar, RandomLoopNestsExpandBackExactly)
{
    std::mt19937 random(2021);
    for (int round = 0; round < 300; ++round) {
        std::vector<uint32_t> input;
        nest(random, 4, input);
        Grammar g;
        ASSERT_EQ(fold_and_expand(g, input), input) << "round " << round;
    }
}

TEST(SkeletonGrammar, ARepeatedCallIsOneSymbolWithItsCount)
{
    Grammar g;
    std::vector<uint32_t> input(1000, 7);
    ASSERT_EQ(fold_and_expand(g, input), input);
    Exported e(g.grammar);
    ASSERT_EQ(e.rules.rule_count, 1u);
    ASSERT_EQ(e.symbol_count(), 1u);
    EXPECT_EQ(e.values[0], 7u);
    EXPECT_EQ(e.exponents[0], 1000u);
}

// (ab)^n c (ab)^m: one rule for ab, used with exponents n and m, whatever
// n and m are.
TEST(SkeletonGrammar, NestedLoopsTakeConstantRules)
{
    for (uint32_t n : { 3u, 50u, 5000u }) {
        for (uint32_t m : { 2u, 70u, 9000u }) {
            std::vector<uint32_t> input;
            for (uint32_t i = 0; i < n; ++i)
                input.insert(input.end(), { 0, 1 });
            input.push_back(2);
            for (uint32_t i = 0; i < m; ++i)
                input.insert(input.end(), { 0, 1 });
            Grammar g;
            ASSERT_EQ(fold_and_expand(g, input), input);
            Exported e(g.grammar);
            EXPECT_EQ(e.rules.rule_count, 2u) << n << " " << m;
            EXPECT_EQ(e.symbol_count(), 5u) << n << " " << m;
            EXPECT_EQ(e.exponents[0], n);
            EXPECT_EQ(e.exponents[2], m);
        }
    }
}

// The demo's shape: Init; 25 x { 10 x { Irecv x4 Isend x4 Waitall };
// Allreduce }; Finalize. The grammar's size does not grow with the
// iterations.
TEST(SkeletonGrammar, AStencilTimeLoopStaysTheSameSize)
{
    uint32_t sizes[2] = { 0, 0 };
    int k = 0;
    for (uint32_t outer : { 25u, 400u }) {
        std::vector<uint32_t> input{ 100 };
        for (uint32_t o = 0; o < outer; ++o) {
            for (int inner = 0; inner < 10; ++inner) {
                for (uint32_t r = 0; r < 4; ++r)
                    input.push_back(1 + r);
                for (uint32_t s = 0; s < 4; ++s)
                    input.push_back(5 + s);
                input.push_back(9);
            }
            input.push_back(10);
        }
        input.push_back(101);
        Grammar g;
        ASSERT_EQ(fold_and_expand(g, input), input);
        sizes[k++] = Exported(g.grammar).symbol_count();
    }
    EXPECT_EQ(sizes[0], sizes[1]);
    EXPECT_LE(sizes[1], 20u);
}

// Amortised constant work: the digram table's probes per append stay
// under a small constant over long inputs, regular or random.
TEST(SkeletonGrammar, WorkPerAppendIsBounded)
{
    std::mt19937 random(7);
    for (bool regular : { true, false }) {
        Grammar g(1u << 20, 1u << 18, 21);
        const size_t length = 200000;
        for (size_t i = 0; i < length; ++i)
            ASSERT_TRUE(g.append(regular ? (uint32_t)(i % 9 == 8 ? 9 + (i / 90) % 2 : i % 9) : random() % 4));
        double probes = (double)adt_skeleton_grammar_probes(g.grammar) / (double)length;
        EXPECT_LT(probes, 12.0) << (regular ? "regular" : "random");
    }
}

// A grammar without room refuses the append and still expands to what it
// took before.
TEST(SkeletonGrammar, AFullGrammarRefusesAndKeepsItsPrefix)
{
    Grammar g(256, 64, 9);
    std::mt19937 random(3);
    std::vector<uint32_t> taken;
    for (int i = 0; i < 10000; ++i) {
        uint32_t t = random() % 50;
        if (!g.append(t))
            break;
        taken.push_back(t);
    }
    ASSERT_LT(taken.size(), 10000u);
    EXPECT_FALSE(g.append(1));
    EXPECT_EQ(Exported(g.grammar).expand(), taken);
}

TEST(SkeletonSignatures, EqualKeysShareATerminalInOrderOfFirstSight)
{
    std::vector<uint64_t> memory(adt_skeleton_signatures_bytes(4, 64) / 8 + 1);
    adt_skeleton_signatures *table = adt_skeleton_signatures_init(memory.data(), 4, 64);
    const uint8_t a[] = { 1, 2, 3 }, b[] = { 1, 2 }, c[] = { 9 };
    EXPECT_EQ(adt_skeleton_signatures_intern(table, a, 3), 0u);
    EXPECT_EQ(adt_skeleton_signatures_intern(table, b, 2), 1u);
    EXPECT_EQ(adt_skeleton_signatures_intern(table, a, 3), 0u);
    EXPECT_EQ(adt_skeleton_signatures_intern(table, c, 1), 2u);
    uint32_t length = 0;
    const uint8_t *key = adt_skeleton_signatures_key(table, 1, &length);
    ASSERT_EQ(length, 2u);
    EXPECT_EQ(key[1], 2);
    const uint8_t d[] = { 4 }, e[] = { 5 };
    EXPECT_EQ(adt_skeleton_signatures_intern(table, d, 1), 3u);
    EXPECT_EQ(adt_skeleton_signatures_intern(table, e, 1), UINT32_MAX);
    EXPECT_EQ(adt_skeleton_signatures_count(table), 4u);
}

} // namespace
