#include "wire_encoding.h"

#include <grpc/slice.h>
#include <grpcpp/support/slice.h>

#include <cstring>

#include "value_convert.h"
#include "wire_format.h"

namespace mentat::server {

namespace {

using edn::EdnKind;
using edn::EdnValue;
using namespace wire;  // NOLINT(google-build-using-namespace)

// #bytes "base64" travels as bytes_value; `*bytes` gets them.
bool AsBytes(const EdnValue& v, std::string* bytes) {
  const EdnValue& inner = v.tagged_value();
  return v.text() == "bytes" && inner.is_string() &&
         Base64Decode(inner.text(), bytes);
}

// #uri "text" travels as the uri field (the text, unchanged).
const std::string* AsUri(const EdnValue& v) {
  const EdnValue& inner = v.tagged_value();
  return v.text() == "uri" && inner.is_string() ? &inner.text() : nullptr;
}

// The sizes a tree of EDN values takes on the wire, computed once, in the
// order WriteTree visits the nodes: each value's Value body; a collection's
// inner body (its ValueList, ValueMap or TaggedValue) after it; a map
// entry's MapEntry before its key and value. Sizing each level from its
// children instead (as protobuf's ByteSizeLong does without its cache)
// sized a pull result's leaves once per level of nesting above them.
using SizeTree = std::vector<size_t>;

// The thread's SizeTree, reused from call to call by ScratchTree and
// EdnRowWire. No holder calls anything that takes it again.
SizeTree& ThreadSizeTree() {
  thread_local SizeTree tree;
  return tree;
}

// A tree that grew past 64K sizes (a huge result) is freed after use
// rather than kept.
void ReleaseIfHuge(SizeTree* tree) {
  if (tree->capacity() > (size_t{1} << 16)) SizeTree().swap(*tree);
}

// Holds the thread's SizeTree, emptied, for one value.
class ScratchTree {
 public:
  ScratchTree() : tree_(ThreadSizeTree()) { tree_.clear(); }
  ~ScratchTree() { ReleaseIfHuge(&tree_); }
  ScratchTree(const ScratchTree&) = delete;
  ScratchTree& operator=(const ScratchTree&) = delete;
  SizeTree* get() { return &tree_; }

 private:
  SizeTree& tree_;
};

// A value that is not a collection nor a tagged value.
size_t LeafWireSize(const EdnValue& v) {
  switch (v.kind()) {
    case EdnKind::kNil:
    case EdnKind::kBool:
      return 2;
    case EdnKind::kInt:
      return 1 + VarintSize(static_cast<uint64_t>(v.as_int()));
    case EdnKind::kFloat:
      return 9;
    case EdnKind::kChar:
      return 1 + VarintSize(static_cast<uint32_t>(v.as_char()));
    case EdnKind::kInst:
      return 1 + VarintSize(static_cast<uint64_t>(v.as_inst_micros()));
    case EdnKind::kBigInt:
    case EdnKind::kBigDec:
    case EdnKind::kString:
    case EdnKind::kKeyword:
    case EdnKind::kSymbol:
    case EdnKind::kUuid:
      return LenFieldSize(1, v.text().size());
    default:
      return 2;
  }
}

size_t SizeInto(const EdnValue& v, SizeTree* s) {
  const size_t at = s->size();
  s->push_back(0);
  size_t n = 0;
  switch (v.kind()) {
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet: {
      s->push_back(0);
      size_t body = 0;
      for (const EdnValue& item : v.items()) {
        body += LenFieldSize(1, SizeInto(item, s));
      }
      (*s)[at + 1] = body;
      n = LenFieldSize(v.kind() == EdnKind::kSet ? kSet : kList, body);
      break;
    }
    case EdnKind::kMap: {
      s->push_back(0);
      size_t body = 0;
      const auto& items = v.items();
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        const size_t entry_at = s->size();
        s->push_back(0);
        size_t entry = LenFieldSize(1, SizeInto(items[i], s));
        entry += LenFieldSize(2, SizeInto(items[i + 1], s));
        (*s)[entry_at] = entry;
        body += LenFieldSize(1, entry);
      }
      (*s)[at + 1] = body;
      n = LenFieldSize(kMap, body);
      break;
    }
    case EdnKind::kTagged: {
      std::string bytes;
      if (AsBytes(v, &bytes)) {
        n = LenFieldSize(kBytes, bytes.size());
      } else if (const std::string* uri = AsUri(v)) {
        n = LenFieldSize(kUri, uri->size());
      } else {
        s->push_back(0);
        size_t body = v.text().empty() ? 0 : LenFieldSize(1, v.text().size());
        body += LenFieldSize(2, SizeInto(v.tagged_value(), s));
        (*s)[at + 1] = body;
        n = LenFieldSize(kTagged, body);
      }
      break;
    }
    default:
      n = LeafWireSize(v);
  }
  (*s)[at] = n;
  return n;
}

// `v`'s Value fields, with the sizes SizeInto put in `*s` (advanced past
// `v`'s).
char* WriteTree(const EdnValue& v, const size_t*& s, char* p) {
  ++s;  // v's own size: its writer's length prefix took it
  switch (v.kind()) {
    case EdnKind::kNil:
      p = WriteVarint((kNil << 3) | kVarint, p);
      *p++ = 1;
      return p;
    case EdnKind::kBool:
      p = WriteVarint((kBoolean << 3) | kVarint, p);
      *p++ = v.as_bool() ? 1 : 0;
      return p;
    case EdnKind::kInt:
      p = WriteVarint((kLong << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_int()), p);
    case EdnKind::kFloat:
      p = WriteVarint((kDouble << 3) | kFixed64, p);
      return WriteDouble(v.as_double(), p);
    case EdnKind::kChar:
      p = WriteVarint((kChar << 3) | kVarint, p);
      return WriteVarint(static_cast<uint32_t>(v.as_char()), p);
    case EdnKind::kInst:
      p = WriteVarint((kInstant << 3) | kVarint, p);
      return WriteVarint(static_cast<uint64_t>(v.as_inst_micros()), p);
    case EdnKind::kBigInt:
      return WriteBytesField(kBigint, v.text(), p);
    case EdnKind::kBigDec:
      return WriteBytesField(kBigdec, v.text(), p);
    case EdnKind::kString:
      return WriteBytesField(kString, v.text(), p);
    case EdnKind::kKeyword:
      return WriteBytesField(kKeyword, v.text(), p);
    case EdnKind::kSymbol:
      return WriteBytesField(kSymbol, v.text(), p);
    case EdnKind::kUuid:
      return WriteBytesField(kUuid, v.text(), p);
    case EdnKind::kList:
    case EdnKind::kVector:
    case EdnKind::kSet:
      p = WriteLenHeader(v.kind() == EdnKind::kSet ? kSet : kList, *s++, p);
      for (const EdnValue& item : v.items()) {
        p = WriteLenHeader(1, *s, p);
        p = WriteTree(item, s, p);
      }
      return p;
    case EdnKind::kMap: {
      p = WriteLenHeader(kMap, *s++, p);
      const auto& items = v.items();
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        p = WriteLenHeader(1, *s++, p);
        p = WriteLenHeader(1, *s, p);
        p = WriteTree(items[i], s, p);
        p = WriteLenHeader(2, *s, p);
        p = WriteTree(items[i + 1], s, p);
      }
      return p;
    }
    case EdnKind::kTagged: {
      std::string bytes;
      if (AsBytes(v, &bytes)) return WriteBytesField(kBytes, bytes, p);
      if (const std::string* uri = AsUri(v)) {
        return WriteBytesField(kUri, *uri, p);
      }
      p = WriteLenHeader(kTagged, *s++, p);
      if (!v.text().empty()) p = WriteBytesField(1, v.text(), p);
      p = WriteLenHeader(2, *s, p);
      return WriteTree(v.tagged_value(), s, p);
    }
  }
  p = WriteVarint((kNil << 3) | kVarint, p);
  *p++ = 1;
  return p;
}

// Appends `v` as a Value message: as field `field` (its tag and length
// first), or as a bare message body when `field` is 0.
void AppendValueField(uint32_t field, const EdnValue& v, std::string* out) {
  ScratchTree tree;
  const size_t n = SizeInto(v, tree.get());
  const size_t start = out->size();
  out->resize(start + (field == 0 ? n : LenFieldSize(field, n)));
  char* p = out->data() + start;
  if (field != 0) p = WriteLenHeader(field, n, p);
  const size_t* s = tree.get()->data();
  WriteTree(v, s, p);
}

}  // namespace

size_t ValueWireSize(const EdnValue& v) {
  SizeTree tree;
  return SizeInto(v, &tree);
}

void AppendValueWire(const EdnValue& v, std::string* out) {
  AppendValueField(0, v, out);
}

namespace {

// `bytes` as the ByteBuffer's one slice (one copy).
void ToByteBuffer(std::string_view bytes, grpc::ByteBuffer* out) {
  grpc::Slice slice(bytes.data(), bytes.size());
  *out = grpc::ByteBuffer(&slice, 1);
}

void AppendBasisTx(int64_t basis_tx, std::string* out) {
  if (basis_tx == 0) return;
  AppendTag(2, kVarint, out);
  AppendVarint(static_cast<uint64_t>(basis_tx), out);
}

}  // namespace

void EncodePullResponse(const EdnValue& result, int64_t basis_tx,
                        grpc::ByteBuffer* out) {
  std::string bytes;
  AppendValueField(1, result, &bytes);
  AppendBasisTx(basis_tx, &bytes);
  ToByteBuffer(bytes, out);
}

void EncodePullManyResponse(const std::vector<EdnValue>& results,
                            int64_t basis_tx, grpc::ByteBuffer* out) {
  std::string bytes;
  for (const EdnValue& r : results) AppendValueField(1, r, &bytes);
  AppendBasisTx(basis_tx, &bytes);
  ToByteBuffer(bytes, out);
}

EdnRowWire::EdnRowWire(const std::vector<EdnValue>& values)
    : values_(values), tree_(&ThreadSizeTree()) {
  tree_->clear();
  for (const EdnValue& v : values) {
    body_ += LenFieldSize(1, SizeInto(v, tree_));
  }
}

EdnRowWire::~EdnRowWire() { ReleaseIfHuge(tree_); }

size_t EdnRowWire::FieldSize(uint32_t field) const {
  return LenFieldSize(field, body_);
}

char* EdnRowWire::Write(uint32_t field, char* p) const {
  p = WriteLenHeader(field, body_, p);
  const size_t* s = tree_->data();
  for (const EdnValue& v : values_) {
    p = WriteLenHeader(1, *s, p);
    p = WriteTree(v, s, p);
  }
  return p;
}

}  // namespace mentat::server
