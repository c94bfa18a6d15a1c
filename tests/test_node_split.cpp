// Pretend nodes (redistribute/node_split): the spec's forms and errors, and the node communicators
// they give, so the across-node route can run on one host.
#include <gtest/gtest.h>
#include <mpi.h>

#include <stdexcept>
#include <vector>

#include "redistribute/node_split.hpp"

namespace pipevd::test {
namespace {

TEST(PretendNodes, SpecForms) {
  EXPECT_TRUE(parse_pretend_nodes("", 4).empty());
  EXPECT_EQ(parse_pretend_nodes("2+2", 4), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(parse_pretend_nodes("1+3", 4), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(parse_pretend_nodes("0,2|1,3", 4), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(parse_pretend_nodes("4", 4), (std::vector<int>{0, 0, 0, 0}));
}

TEST(PretendNodes, BadSpecsAreRefused) {
  for (const char* spec :
       {"2+1", "2+3", "0+4", "x", "2+", "0,1|1,2,3", "0,1|2", "0,4|1,2,3", "-1,0|1,2,3"})
    EXPECT_THROW(parse_pretend_nodes(spec, 4), std::invalid_argument) << spec;
}

TEST(PretendNodes, SplitFollowsTheSpec) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size != 4) GTEST_SKIP() << "needs 4 ranks";
  set_pretend_nodes("0,2|1,3");
  ASSERT_TRUE(pretend_nodes_active());
  MPI_Comm node = split_by_node(MPI_COMM_WORLD, rank);
  int node_size = 0, node_rank = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_rank(node, &node_rank);
  EXPECT_EQ(node_size, 2);
  EXPECT_EQ(node_rank, rank / 2);  // 0, 2 -> 0, 1 and 1, 3 -> 0, 1
  MPI_Comm_free(&node);
  set_pretend_nodes("");
  EXPECT_FALSE(pretend_nodes_active());
  node = split_by_node(MPI_COMM_WORLD, rank);
  MPI_Comm_size(node, &node_size);
  EXPECT_EQ(node_size, 4);  // one real host
  MPI_Comm_free(&node);
}

}  // namespace
}  // namespace pipevd::test
