/*
 * A stand-in for miniaudio.h, written for agentloop's CI build of the Ollama
 * server (.ci/ollama.sh).
 *
 * The Go module zip of github.com/ollama/ollama leaves out llama.cpp's
 * vendor/ directory. Debian packages two of its three header sets (nlohmann
 * JSON, stb); miniaudio has no package. llama.cpp uses it only in
 * tools/mtmd/mtmd-helper.cpp, to decode audio attachments for multimodal
 * models. The integration suite never sends audio, so every decoder here
 * reports failure and such input is refused as "not audio".
 *
 * Only the names mtmd-helper.cpp uses are declared. The includer defines
 * MA_API (as static); the default keeps the header usable on its own.
 */
#ifndef AGENTLOOP_MINIAUDIO_STUB_H
#define AGENTLOOP_MINIAUDIO_STUB_H

#include <stddef.h>

#ifndef MA_API
#define MA_API static
#endif

typedef int ma_result;
#define MA_SUCCESS 0
#define MA_ERROR (-1)

typedef unsigned int ma_uint32;
typedef unsigned long long ma_uint64;

typedef enum {
    ma_format_unknown = 0,
    ma_format_f32 = 5
} ma_format;

typedef struct {
    ma_format format;
    ma_uint32 channels;
    ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
    int unused;
} ma_decoder;

MA_API ma_decoder_config ma_decoder_config_init(ma_format format, ma_uint32 channels, ma_uint32 sampleRate) {
    ma_decoder_config c;
    c.format = format;
    c.channels = channels;
    c.sampleRate = sampleRate;
    return c;
}

MA_API ma_result ma_decoder_init_memory(const void *data, size_t size, const ma_decoder_config *config, ma_decoder *decoder) {
    (void)data; (void)size; (void)config; (void)decoder;
    return MA_ERROR; /* no audio support in this build */
}

MA_API ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *decoder, ma_uint64 *length) {
    (void)decoder;
    *length = 0;
    return MA_ERROR;
}

MA_API ma_result ma_decoder_read_pcm_frames(ma_decoder *decoder, void *out, ma_uint64 frames, ma_uint64 *read) {
    (void)decoder; (void)out; (void)frames;
    *read = 0;
    return MA_ERROR;
}

MA_API ma_result ma_decoder_uninit(ma_decoder *decoder) {
    (void)decoder;
    return MA_SUCCESS;
}

#endif /* AGENTLOOP_MINIAUDIO_STUB_H */
