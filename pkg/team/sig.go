package team

import "encoding/base64"

func decodeSig(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return base64.StdEncoding.DecodeString(s)
	}
	return b, nil
}
